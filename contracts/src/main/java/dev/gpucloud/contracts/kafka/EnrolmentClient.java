package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.http.PemTrust;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Logger;

/**
 * A node agent's enrolment on Kubernetes (docs/security.md, "Enrolment on Kubernetes"): nothing provisions a
 * credential per node there, so the agent asks the scheduler for one at start, proving which node it runs on with
 * the Kubernetes service account token the kubelet projects into its pod (bound to the pod, and so to its node).
 * The scheduler answers the credential in its file's form, which is written readable by its owner only.
 *
 * <p>While the scheduler does not answer (not started yet, restarting, or a 5xx), the agent tries again with
 * growing, jittered pauses (1 s doubling to 30 s, so that a thousand agents starting together do not call in
 * step) until {@code patience} runs out. A refusal (401, 403, 400, 404: a token that does not verify, another
 * service account, enrolment off) is final: asking again would be refused again, so the agent stops with the
 * scheduler's reason.
 */
public final class EnrolmentClient {

    /** The environment variable with the scheduler's enrolment URL ({@code https://scheduler-service:8081/enrolment}). */
    public static final String URL_ENV = "GPUCLOUD_ENROLMENT_URL";
    /** The environment variable naming the projected service account token file. */
    public static final String TOKEN_ENV = "GPUCLOUD_ENROLMENT_TOKEN_FILE";
    /** The environment variable naming the PEM file of the CA the scheduler's certificate is checked against. */
    public static final String CA_ENV = "GPUCLOUD_ENROLMENT_CA";
    /** Where the DaemonSet projects the token when {@value #TOKEN_ENV} is not set. */
    public static final Path DEFAULT_TOKEN_FILE = Path.of("/var/run/secrets/gpucloud/enrolment/token");
    /**
     * How long an agent waits for the scheduler before its start fails: within the DaemonSet's startup probe
     * (5 minutes), so the pod is restarted by Kubernetes, with its own back-off, only after this.
     */
    public static final Duration DEFAULT_PATIENCE = Duration.ofMinutes(4);

    private static final Logger LOG = Logger.getLogger(EnrolmentClient.class.getName());
    /** A credential is three short lines, a login two more: anything longer is not one. */
    private static final int MAX_ANSWER = 8192;
    private static final Duration FIRST_PAUSE = Duration.ofSeconds(1);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(30);

    /**
     * What the scheduler answered: the credential, and the agent's own Kafka login where the scheduler makes one per
     * agent (a Strimzi KafkaUser), else {@code null}.
     */
    public record Answer(Enrolment.Credential credential, KafkaLogin login) {
    }

    /** The scheduler refused to enrol this agent; asking again would not change its answer. */
    public static final class Refused extends IOException {
        public Refused(String message) {
            super(message);
        }
    }

    private final URI url;
    private final Path tokenFile;
    private final HttpClient http;
    private final Duration patience;
    private final Duration firstPause;

    /**
     * A client of the endpoint at {@code url}, sending the token in {@code tokenFile} (read again on every try: the
     * kubelet renews it), checking the scheduler's certificate against {@code caFile} (null: the JDK's CAs).
     */
    public EnrolmentClient(URI url, Path tokenFile, Path caFile, Duration patience, Duration firstPause)
            throws IOException {
        if (!"https".equals(url.getScheme()) && !"http".equals(url.getScheme())) {
            throw new IllegalArgumentException("the enrolment URL must be https:// (or http:// on a trusted network),"
                    + " is '" + url + "'");
        }
        this.url = url;
        this.tokenFile = tokenFile;
        this.patience = patience;
        this.firstPause = firstPause;
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (caFile != null) {
            builder.sslContext(PemTrust.sslContext(caFile));
        }
        this.http = builder.build();
    }

    /** The client {@link #URL_ENV}, {@link #TOKEN_ENV} and {@link #CA_ENV} describe, with the default patience. */
    public static EnrolmentClient of(String url, String tokenFile, String caFile) throws IOException {
        return new EnrolmentClient(URI.create(url.strip()),
                tokenFile == null || tokenFile.isBlank() ? DEFAULT_TOKEN_FILE : Path.of(tokenFile.strip()),
                caFile == null || caFile.isBlank() ? null : Path.of(caFile.strip()), DEFAULT_PATIENCE, FIRST_PAUSE);
    }

    /**
     * Asks for this agent's credential until the scheduler answers, and writes it to {@code credentialFile}
     * (readable by its owner only).
     *
     * @throws Refused the scheduler refused, with its reason
     * @throws IOException the scheduler did not answer within the patience, or the file could not be written
     */
    public Enrolment.Credential enrol(Path credentialFile) throws IOException {
        return enrol(credentialFile, null).credential();
    }

    /**
     * Asks for this agent's credential and Kafka login until the scheduler answers, and writes them (readable by
     * their owner only): the login to {@code loginFile} first, where the answer has one and a file is given, then the
     * credential to {@code credentialFile}, so that a credential file on disk means the enrolment was complete.
     *
     * @throws Refused the scheduler refused, with its reason
     * @throws IOException the scheduler did not answer within the patience, or a file could not be written
     */
    public Answer enrol(Path credentialFile, Path loginFile) throws IOException {
        Instant giveUp = Instant.now().plus(patience);
        Duration pause = firstPause;
        int tries = 0;
        while (true) {
            tries++;
            String why;
            try {
                Answer answer = ask();
                Enrolment.Credential credential = answer.credential();
                Path parent = credentialFile.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                if (answer.login() != null && loginFile != null) {
                    answer.login().write(loginFile);
                }
                KafkaAccess.writeOwnerOnly(credentialFile, credential.fileText(), true);
                LOG.info(() -> "enrolled as agent " + credential.agentId() + " for hosts " + credential.hosts()
                        + " by " + url + "; the credential is in " + credentialFile
                        + (answer.login() == null ? "; no Kafka login of its own"
                                : "; Kafka user " + answer.login().user() + (loginFile == null ? "" : " in " + loginFile)));
                return answer;
            } catch (Refused refused) {
                throw refused;
            } catch (IOException e) {
                why = e.getMessage() != null ? e.getMessage() : e.toString();
            }
            if (Instant.now().plus(pause).isAfter(giveUp)) {
                throw new IOException("no enrolment credential from " + url + " after " + tries + " tries in "
                        + patience.toSeconds() + " s: " + why);
            }
            long millis = pause.toMillis();
            long sleep = millis / 2 + ThreadLocalRandom.current().nextLong(millis / 2 + 1);
            String reason = why;
            int attempt = tries;
            LOG.warning(() -> "enrolment at " + url + " failed (try " + attempt + "): " + reason + "; trying again in "
                    + sleep + " ms");
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting to enrol at " + url, e);
            }
            pause = pause.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : pause.multipliedBy(2);
        }
    }

    /** One request: the answer, a {@link Refused}, or another IOException that is worth another try. */
    private Answer ask() throws IOException {
        String token;
        try {
            token = Files.readString(tokenFile, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            // the kubelet writes the projected token before the container starts: a missing one is a manifest's fault
            throw new Refused("cannot read the service account token " + tokenFile + " (" + TOKEN_ENV + "): " + e);
        }
        HttpResponse<String> response;
        try {
            response = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(15))
                    .header("Authorization", "Bearer " + token)
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted while enrolling at " + url);
        }
        String body = response.body() == null ? "" : response.body();
        int status = response.statusCode();
        if (status == 200) {
            if (body.length() > MAX_ANSWER) {
                throw new Refused(url + " answered " + body.length() + " characters, not a credential");
            }
            try {
                return new Answer(Enrolment.Credential.parse(body), KafkaLogin.parse(body));
            } catch (IllegalArgumentException e) {
                throw new Refused(url + " answered something that is not a credential: " + e.getMessage());
            }
        }
        String said = body.length() > 500 ? body.substring(0, 500) + "..." : body;
        if (status >= 500) {
            throw new IOException(url + " answered " + status + ": " + said);
        }
        throw new Refused(url + " refused to enrol this agent (" + status + "): " + said);
    }
}
