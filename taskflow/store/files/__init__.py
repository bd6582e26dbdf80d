"""Where the bytes of attached files live: a local directory or S3-compatible storage."""
