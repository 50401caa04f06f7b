package dev.gpucloud.bench;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.contracts.kafka.Enrolment;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What enrolment (docs/security.md, "Enrolment") costs per record: an agent signing one, a reader checking
 * one, and for comparison the Ed25519 verification a public-key design would need instead. The value is
 * random bytes of the size of a telemetry sample (an 8-GPU host's is about 2 KB of JSON).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgs = {"-Xms256m", "-Xmx256m"})
public class EnrolmentBenchmark {

    @Param({"2048"})
    public int valueBytes;

    private Enrolment.Credential credential;
    private Enrolment.Verifier verifier;
    private ProducerRecord<String, byte[]> unsigned;
    private ConsumerRecord<String, byte[]> signed;
    private String source;
    private Signature ed25519Verifier;
    private byte[] ed25519Signature;
    private KeyPair keys;

    @Setup
    public void setUp() throws Exception {
        byte[] key = Enrolment.newKey();
        credential = Enrolment.Credential.mint(key, "rack-7", List.of("rack7-*"));
        verifier = new Enrolment.Verifier(key);
        byte[] value = new byte[valueBytes];
        new Random(7).nextBytes(value);
        source = Enrolment.SOURCE_PREFIX + "rack7-a100-3";
        unsigned = new ProducerRecord<>(Topics.GPU_TELEMETRY.name(), "rack7-a100-3", value);
        CloudEventHeaders.write(unsigned.headers(), CloudEvent.create(Topics.GPU_TELEMETRY.eventType(), source,
                Instant.now()));
        ProducerRecord<String, byte[]> out = credential.sign(unsigned);
        signed = new ConsumerRecord<>(out.topic(), 0, 0L, out.key(), out.value());
        out.headers().forEach(h -> signed.headers().add(h));

        keys = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(keys.getPrivate());
        signer.update(value);
        ed25519Signature = signer.sign();
        ed25519Verifier = Signature.getInstance("Ed25519");
    }

    /** The agent: the record with its three enrolment headers. */
    @Benchmark
    public ProducerRecord<String, byte[]> hmacSign() {
        return credential.sign(unsigned);
    }

    /** A reader: derive the agent's key, check the MAC and the host. */
    @Benchmark
    public ConsumerRecord<String, byte[]> hmacCheck() {
        verifier.check(signed, source, "rack7-a100-3");
        return signed;
    }

    /** What a reader would pay per record with Ed25519 signatures instead. */
    @Benchmark
    public boolean ed25519Verify() throws Exception {
        ed25519Verifier.initVerify(keys.getPublic());
        ed25519Verifier.update(signed.value());
        return ed25519Verifier.verify(ed25519Signature);
    }
}
