// The error of a protobuf body or object that does not fit the schema: the request is refused with its message.

export class ProtobufError extends Error {}
