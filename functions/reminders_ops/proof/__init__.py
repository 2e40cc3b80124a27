"""What the product's proof is built on: the catalogue of the API's operations (``routes``) that the
adversarial-tenant sweep (tests/integration/test_adversarial_tenant_sweep.py) and the explorer of
issue 26 both take their actions from."""
