package dev.gpucloud.scheduler.service.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes a request that cannot be parsed (malformed protobuf, invalid UTF-8 in a string field) the client's
 * INVALID_ARGUMENT rather than INTERNAL. The transport parses a request before any interceptor sees it and
 * answers a parse failure as the server's fault, so parsing is made total instead: each method's request
 * marshaller turns a failure into an empty request that carries the reason in a reserved unknown field, and
 * a server interceptor closes such a call with INVALID_ARGUMENT before the service sees it.
 */
final class StrictRequests {

    /** The largest field number protobuf allows: no gpucloud message uses it. */
    static final int UNPARSEABLE = 536_870_911;

    private StrictRequests() {
    }

    /** The same service: strict request marshallers, and the interceptor that refuses what they could not parse. */
    static ServerServiceDefinition of(ServerServiceDefinition service) {
        ServiceDescriptor original = service.getServiceDescriptor();
        ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(original.getName())
                .setSchemaDescriptor(original.getSchemaDescriptor());
        List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
            ServerMethodDefinition<?, ?> strict = strict(method);
            descriptor.addMethod(strict.getMethodDescriptor());
            methods.add(strict);
        }
        ServerServiceDefinition.Builder wrapped = ServerServiceDefinition.builder(descriptor.build());
        methods.forEach(wrapped::addMethod);
        return ServerInterceptors.intercept(wrapped.build(), new RefuseUnparseable());
    }

    private static <Q, R> ServerMethodDefinition<Q, R> strict(ServerMethodDefinition<Q, R> method) {
        MethodDescriptor<Q, R> descriptor = method.getMethodDescriptor();
        if (!(descriptor.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<Q> proto)
                || !(proto.getMessagePrototype() instanceof Message)) {
            return method;
        }
        MethodDescriptor<Q, R> strict = descriptor.toBuilder(new Total<>(proto), descriptor.getResponseMarshaller())
                .build();
        return ServerMethodDefinition.create(strict, method.getServerCallHandler());
    }

    /** Parses as the wrapped marshaller does; a failure becomes an empty message marked with the reason. */
    static final class Total<T> implements MethodDescriptor.PrototypeMarshaller<T> {
        private final MethodDescriptor.PrototypeMarshaller<T> inner;

        Total(MethodDescriptor.PrototypeMarshaller<T> inner) {
            this.inner = inner;
        }

        @Override
        public InputStream stream(T value) {
            return inner.stream(value);
        }

        @Override
        public T parse(InputStream stream) {
            try {
                return inner.parse(stream);
            } catch (StatusRuntimeException e) {
                return unparseable(e.getStatus().getDescription());
            } catch (RuntimeException e) {
                return unparseable(e.getMessage());
            }
        }

        @Override
        public T getMessagePrototype() {
            return inner.getMessagePrototype();
        }

        @Override
        public Class<T> getMessageClass() {
            return inner.getMessageClass();
        }

        @SuppressWarnings("unchecked")
        private T unparseable(String why) {
            String reason = why == null ? "unparseable" : why;
            UnknownFieldSet marker = UnknownFieldSet.newBuilder().addField(UNPARSEABLE, UnknownFieldSet.Field
                    .newBuilder().addLengthDelimited(ByteString.copyFromUtf8(reason)).build()).build();
            return (T) ((Message) inner.getMessagePrototype()).toBuilder().setUnknownFields(marker).build();
        }
    }

    /** Closes a call whose request could not be parsed with INVALID_ARGUMENT; the service never sees it. */
    static final class RefuseUnparseable implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                ServerCallHandler<Q, R> next) {
            ServerCall.Listener<Q> listener = next.startCall(call, headers);
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
                private boolean refused;

                @Override
                public void onMessage(Q message) {
                    if (message instanceof Message m && m.getUnknownFields().hasField(UNPARSEABLE)) {
                        refused = true;
                        String why = m.getUnknownFields().getField(UNPARSEABLE).getLengthDelimitedList().get(0)
                                .toString(StandardCharsets.UTF_8);
                        call.close(Status.INVALID_ARGUMENT.withDescription("the request to "
                                + call.getMethodDescriptor().getFullMethodName() + " is not a valid protobuf message ("
                                + why + ")"), new Metadata());
                        return;
                    }
                    super.onMessage(message);
                }

                @Override
                public void onHalfClose() {
                    if (!refused) {
                        super.onHalfClose();
                    }
                }
            };
        }
    }
}
