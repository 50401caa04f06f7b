package dev.gpucloud.contracts.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A TLS context that trusts the certificates of one PEM file and nothing else, for an HTTPS client that talks to
 * a server of a private CA: a Kubernetes API server (its {@code ca.crt}), or gpucloud's own CA. Trusting only that
 * file, rather than adding it to the JDK's list, means a certificate from any public CA does not pass for it.
 */
public final class PemTrust {

    private PemTrust() {
    }

    /**
     * An SSL context trusting the certificates in {@code pemFile}.
     *
     * @throws IOException naming the file when it cannot be read or holds no certificate
     */
    public static SSLContext sslContext(Path pemFile) throws IOException {
        try (InputStream in = Files.newInputStream(pemFile)) {
            Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509")
                    .generateCertificates(in);
            if (certificates.isEmpty()) {
                throw new IOException(pemFile + " holds no certificate");
            }
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int i = 0;
            for (Certificate certificate : certificates) {
                trusted.setCertificateEntry("ca-" + i++, certificate);
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException(pemFile + " is not a PEM file of certificates: " + e.getMessage(), e);
        }
    }
}
