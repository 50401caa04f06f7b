/**
 * Providers carry out the core's plans: they launch and release hosts of a catalog's instance types. The
 * simulated fleet and AWS EC2 implement {@link dev.gpucloud.autoscaler.provider.FleetProvider}; another cloud
 * needs the same few calls (docs/autoscaler.md).
 */
package dev.gpucloud.autoscaler.provider;
