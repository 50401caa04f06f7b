package dev.gpucloud.scheduler.service.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * Enrolment of node agents on Kubernetes (docs/security.md, "Enrolment on Kubernetes"), under
 * {@code gpucloud.enrolment}: {@code POST /enrolment} answers an agent's credential for the node its pod's service
 * account token names. Off unless {@code kubernetes.issuer} is set.
 */
@ConfigMapping(prefix = "gpucloud.enrolment")
public interface EnrolmentConfig {

    /**
     * The file of the enrolment key ({@code GPUCLOUD_ENROLMENT_KEY}): named here so that the mapping knows the
     * property; {@link EnrolmentKey} reads it, once, for checking, sealing and minting alike.
     */
    Optional<String> key();

    /** Whose tokens enrol agents. */
    Kubernetes kubernetes();

    /** The cluster whose service account tokens prove which node an agent runs on. */
    interface Kubernetes {

        /**
         * The cluster's service account issuer ({@code kubectl get --raw /.well-known/openid-configuration} names
         * it; often {@code https://kubernetes.default.svc.cluster.local}); unset, enrolment is off (404).
         */
        Optional<String> issuer();

        /** The audience of the agents' projected tokens (the DaemonSet's serviceAccountToken volume). */
        @WithDefault("gpucloud-enrolment")
        String audience();

        /** The node agents' service account, the only subject enrolled: system:serviceaccount:NAMESPACE:NAME. */
        Optional<String> subject();

        /**
         * A token this service sends to read the issuer's discovery document and keys, which an API server serves
         * only to authenticated callers (the pod's own service account token); unset, none is sent.
         */
        Optional<String> issuerTokenFile();

        /** The PEM file of the CA the issuer's certificate is checked against (the cluster's ca.crt); unset, the JDK's. */
        Optional<String> issuerCa();

        /** Each enrolled agent's own Kafka login, a Strimzi KafkaUser the scheduler makes. */
        KafkaUsers kafkaUsers();
    }

    /**
     * Where the scheduler makes a Strimzi {@code KafkaUser} {@code agent-ID} (and its password's Secret) for each agent
     * it enrols, through the Kubernetes API with its own service account (docs/security.md, "Enrolment on
     * Kubernetes"). Off unless {@code namespace} is set: the agents then log in as configured, with no login of their
     * own.
     */
    interface KafkaUsers {

        /** The namespace of the Kafka cluster's user operator, where the KafkaUsers go; unset, none are made. */
        Optional<String> namespace();

        /** The Strimzi Kafka cluster the users belong to (their label {@code strimzi.io/cluster}). */
        @WithDefault("gpucloud")
        String cluster();

        /** The Kubernetes API server, as a pod reaches it. */
        @WithDefault("https://kubernetes.default.svc")
        String apiServer();

        /** The token the scheduler calls the API with: its own service account's, which the kubelet renews. */
        @WithDefault("/var/run/secrets/kubernetes.io/serviceaccount/token")
        String tokenFile();

        /** The PEM file of the CA the API server's certificate is checked against (an https API server only). */
        @WithDefault("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
        String ca();

        /**
         * How long an enrolment waits for Strimzi to make the user ready before it answers 503 (the agent asks again):
         * within the 15 s an agent waits for one answer.
         */
        @WithDefault("10s")
        Duration readyTimeout();
    }
}
