"""The Open Inference Protocol gRPC definition (.proto), its serialized descriptor and message classes."""
