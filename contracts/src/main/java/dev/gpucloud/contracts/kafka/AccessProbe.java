package dev.gpucloud.contracts.kafka;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Tries one thing on a broker as one client (a write to a topic, or a read of it) and says what the broker
 * answered: the demo shows with it that a forged usage record is refused, and the ACL test asks it about every
 * principal and topic. A write that is allowed really lands: a record with key {@value #PROBE_KEY} and no
 * value, which every gpucloud consumer dead-letters as malformed.
 *
 * <p>Run as {@code java ... AccessProbe BOOTSTRAP CLIENT_CONFIG|- write|read TOPIC}; prints the outcome and
 * exits 0 when allowed, 1 when refused.
 */
public final class AccessProbe {

    public static final String PROBE_KEY = "access-probe";
    private static final Duration WAIT = Duration.ofSeconds(6);

    private AccessProbe() {
    }

    /** What the broker did with the attempt. */
    public enum Outcome {
        ALLOWED("allowed"),
        NOT_AUTHORIZED("refused: not authorized (ACL)"),
        AUTHENTICATION_FAILED("refused: authentication failed (the login, or the TLS handshake)"),
        NO_ANSWER("refused: the broker closed the connection (no TLS, or no login)");

        private final String words;

        Outcome(String words) {
            this.words = words;
        }

        public String words() {
            return words;
        }
    }

    /** Writes one probe record to the topic as the client that {@code login} describes. */
    public static Outcome write(String bootstrap, Properties login, String topic) {
        Properties props = base(bootstrap, login);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) WAIT.toMillis());
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis() + 1000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.RETRIES_CONFIG, 0);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(topic, PROBE_KEY, null)).get(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
            return Outcome.ALLOWED;
        } catch (ExecutionException e) {
            return outcome(e.getCause());
        } catch (KafkaException e) {
            return outcome(e);
        } catch (TimeoutException e) {
            return Outcome.NO_ANSWER;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.NO_ANSWER;
        }
    }

    /** Reads the topic from its start (assigned partitions, no group) as the client {@code login} describes. */
    public static Outcome read(String bootstrap, Properties login, String topic) {
        Properties props = base(bootstrap, login);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis());
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props)) {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, WAIT);
            if (partitions == null || partitions.isEmpty()) {
                return Outcome.NOT_AUTHORIZED; // a topic one may not describe looks like no topic at all
            }
            consumer.assign(partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList());
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500));
                if (consumer.assignment().stream().allMatch(tp -> consumer.position(tp, WAIT) >= 0)) {
                    return Outcome.ALLOWED;
                }
            }
            return Outcome.NO_ANSWER;
        } catch (KafkaException e) {
            return outcome(e);
        }
    }

    private static Properties base(String bootstrap, Properties login) {
        Properties props = new Properties();
        props.putAll(login);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "gpucloud-access-probe");
        props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
        return props;
    }

    private static Outcome outcome(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthorizationException) {
                return Outcome.NOT_AUTHORIZED;
            }
            if (t instanceof AuthenticationException) {
                return Outcome.AUTHENTICATION_FAILED;
            }
        }
        return Outcome.NO_ANSWER;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4 || !(args[2].equals("write") || args[2].equals("read"))) {
            System.err.println("usage: AccessProbe BOOTSTRAP CLIENT_CONFIG|- write|read TOPIC");
            System.exit(2);
        }
        Properties login = args[1].equals("-") ? new Properties() : KafkaAccess.clientConfig(Path.of(args[1]));
        Outcome outcome = args[2].equals("write") ? write(args[0], login, args[3]) : read(args[0], login, args[3]);
        System.out.println(args[2] + " " + args[3] + ": " + outcome.words());
        System.exit(outcome == Outcome.ALLOWED ? 0 : 1);
    }
}
