"""Files outsiders and staff attach to a slot: references, sniffing and caps (pure)."""
