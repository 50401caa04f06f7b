package dev.gpucloud.e2e;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;

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
        return http(runDir, null);
    }

    /**
     * The same, with {@code certificate} (a PKCS12 file from {@link #certificate}, its password beside it) for a
     * server that asks for a client certificate. The JDK's key manager sends it only to a server that names its CA.
     */
    static HttpClient http(Path runDir, Path certificate) throws IOException, GeneralSecurityException {
        KeyManager[] keys = null;
        if (certificate != null) {
            char[] password = password(certificate);
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(load(certificate, password), password);
            keys = factory.getKeyManagers();
        }
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(keys, trusting(runDir).getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(tls).build();
    }

    /**
     * TLS that presents {@code certificate} to every server that asks for one, whatever CAs the server names, as
     * OpenSSL-based clients (curl, and most languages' TLS) do. The JDK's own key managers present only a
     * certificate issued by a CA the server names, so a JDK client set up with another CA's certificate sends none.
     */
    static SSLContext presenting(Path runDir, Path certificate) throws IOException, GeneralSecurityException {
        SSLContext tls = SSLContext.getInstance("TLSv1.3");
        tls.init(new KeyManager[] {presentingKeyManager(certificate)}, trusting(runDir).getTrustManagers(), null);
        return tls;
    }

    /** The key manager of {@link #presenting}: always the one key and chain of {@code certificate}. */
    static X509ExtendedKeyManager presentingKeyManager(Path certificate) throws IOException, GeneralSecurityException {
        char[] password = password(certificate);
        KeyStore own = load(certificate, password);
        String alias = null;
        for (String a : Collections.list(own.aliases())) {
            if (own.isKeyEntry(a)) {
                alias = a;
            }
        }
        if (alias == null) {
            throw new IOException(certificate + " holds no key");
        }
        String name = alias;
        PrivateKey key = (PrivateKey) own.getKey(alias, password);
        Certificate[] stored = own.getCertificateChain(alias);
        X509Certificate[] chain = Arrays.copyOf(stored, stored.length, X509Certificate[].class);
        return new X509ExtendedKeyManager() {
            @Override
            public String[] getClientAliases(String keyType, Principal[] issuers) {
                return new String[] {name};
            }

            @Override
            public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
                return name;
            }

            @Override
            public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
                return name;
            }

            @Override
            public String[] getServerAliases(String keyType, Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
                return null;
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return chain.clone();
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return key;
            }
        };
    }

    /**
     * Opens a TLS connection to localhost:port with {@code tls}, sends {@code request} and reads what comes back:
     * "answered FIRST LINE", "closed" (the connection ended without an answer), "no answer" (within 15 s) or
     * "refused: ..." (a TLS alert).
     * In TLS 1.3 a server checks the client's certificate after the client has finished its side of the
     * handshake, so a refusal arrives on the first read.
     */
    static String exchange(SSLContext tls, int port, byte[] request) throws IOException {
        try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("localhost", port)) {
            socket.setSoTimeout(15_000);
            SSLParameters params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(params);
            socket.startHandshake();
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            byte[] answer = new byte[64];
            int n = socket.getInputStream().read(answer);
            return n < 0 ? "closed" : "answered " + new String(answer, 0, n, StandardCharsets.ISO_8859_1).lines()
                    .findFirst().orElse("");
        } catch (SSLException e) {
            return "refused: " + e.getMessage();
        } catch (java.net.SocketTimeoutException e) {
            return "no answer"; // the handshake passed; the server waits for more than was sent
        }
    }

    /**
     * A certificate for {@code name} from the CA of the run folder {@code runDir}, made by deploy/local/tls.sh (which
     * makes that CA first if the folder has none): a run folder of its own gives a certificate from another CA.
     */
    static Path certificate(Path root, Path runDir, String name) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("deploy/local/tls.sh").toString(), "server", name)
                .directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("GPUCLOUD_RUN_DIR", runDir.toString());
        Process process = pb.start();
        if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException("tls.sh server " + name + " in " + runDir + " failed");
        }
        return runDir.resolve("tls/" + name + ".p12");
    }

    /** The password of a PKCS12 file tls.sh made (NAME.pass beside NAME.p12). */
    static char[] password(Path certificate) throws IOException {
        String file = certificate.getFileName().toString().replaceFirst("\\.p12$", ".pass");
        return Files.readString(certificate.resolveSibling(file)).strip().toCharArray();
    }

    private static KeyStore load(Path certificate, char[] password) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certificate)) {
            store.load(in, password);
        }
        return store;
    }

    /** Trust in the stack's CA only. */
    private static TrustManagerFactory trusting(Path runDir) throws IOException, GeneralSecurityException {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(ca(runDir))) {
            trusted.setCertificateEntry("gpucloud-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        return trust;
    }
}
