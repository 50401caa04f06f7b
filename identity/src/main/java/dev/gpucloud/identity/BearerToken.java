package dev.gpucloud.identity;

import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.Executor;

/** A client's token on every gRPC call it makes, in the {@code authorization} header as {@code Bearer <token>}. */
public final class BearerToken extends CallCredentials {

    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final String token;

    public BearerToken(String token) {
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("a bearer token must not be empty");
        }
        this.token = token.strip();
    }

    @Override
    public void applyRequestMetadata(RequestInfo requestInfo, Executor appExecutor, MetadataApplier applier) {
        try {
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + token);
            applier.apply(headers);
        } catch (RuntimeException e) {
            applier.fail(Status.UNAUTHENTICATED.withDescription("cannot attach the token").withCause(e));
        }
    }

    /** Sends this token on every call of the channel it intercepts. */
    public ClientInterceptor interceptor() {
        BearerToken credentials = this;
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions options, Channel next) {
                return next.newCall(method, options.withCallCredentials(credentials));
            }
        };
    }

    /** The header value, for HTTP clients. */
    public String header() {
        return "Bearer " + token;
    }
}
