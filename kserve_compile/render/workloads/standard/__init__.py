"""Standard mode (formerly RawDeployment): Deployment, Service and autoscaler per component."""
