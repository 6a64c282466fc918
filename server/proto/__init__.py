"""The Open Inference Protocol gRPC definition (.proto), its serialized descriptor and message classes."""

__all__ = ["generate", "grpc_predict_v2_descriptor", "messages"]
