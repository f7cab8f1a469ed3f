"""Pipeline studies (one module per study) and the shared table of checks."""
