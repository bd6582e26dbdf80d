"""Workspaces in GraphQL: the admin verbs of the default workspace's admins."""
