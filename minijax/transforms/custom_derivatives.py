"""custom_jvp / custom_vjp (in progress)."""
custom_jvp = custom_vjp = None
