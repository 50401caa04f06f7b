package dev.gpucloud.e2e;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** Clients of a stack that ./gpucloud up started with TLS: they trust its own CA (RUN/tls/ca.pem) and nothing else. */
final class StackTls {

    private StackTls() {
    }

    static Path ca(Path runDir) {
        return runDir.resolve("tls/ca.pem");
    }

    /** A gRPC channel to localhost:port over TLS. */
    static ManagedChannel channel(Path runDir, int port) throws IOException {
        return Grpc.newChannelBuilderForAddress("localhost", port,
                TlsChannelCredentials.newBuilder().trustManager(ca(runDir).toFile()).build()).build();
    }

    /** An HTTP client for https://localhost:port (and plain http elsewhere, Keycloak's say). */
    static HttpClient http(Path runDir) throws IOException, GeneralSecurityException {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(ca(runDir))) {
            trusted.setCertificateEntry("gpucloud-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, trust.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(tls).build();
    }
}
