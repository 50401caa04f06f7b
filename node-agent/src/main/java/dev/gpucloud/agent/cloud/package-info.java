/**
 * Reserved for the cloud's instance notices: spot interruption and rebalance hints read from the
 * instance metadata service and reported on node.events.
 */
package dev.gpucloud.agent.cloud;
