/**
 * The cloud's metadata service: spot interruption and rebalance notices (AWS IMDSv2, GCP, Azure
 * Scheduled Events), and the instance's type, zone and capacity type. Plain Java on the JDK's
 * HTTP client; the adapter publishes what it finds on node.events.
 */
package dev.gpucloud.agent.cloud;
