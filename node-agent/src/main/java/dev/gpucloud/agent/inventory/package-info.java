/**
 * What the agent learns about its host beyond the GPUs: RDMA NICs from sysfs, datasets cached on
 * local NVMe, and the cloud's instance facts folded into each host's inventory. Plain Java.
 */
package dev.gpucloud.agent.inventory;
