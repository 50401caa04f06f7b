/**
 * The durable spool: usage and allocation events are written to local files before they are sent,
 * and removed only once the broker has acknowledged them, so a broker outage of any length or an
 * agent restart loses none. Telemetry instead goes through a bounded queue that sheds its oldest
 * samples. Plain Java: the Kafka producer is behind {@link dev.gpucloud.agent.spool.SpoolSink}.
 */
package dev.gpucloud.agent.spool;
