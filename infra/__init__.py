"""The CDK app of the reminder delivery system: one stack, one construct per capability."""
