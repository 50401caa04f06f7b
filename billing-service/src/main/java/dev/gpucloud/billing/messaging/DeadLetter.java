package dev.gpucloud.billing.messaging;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A consumed record that billing will not apply, and why. */
record DeadLetter(ConsumerRecord<String, byte[]> record, String reason) {
}
