/**
 * AWS EC2 behind {@link dev.gpucloud.autoscaler.provider.FleetProvider}: instant EC2 Fleets through the AWS SDK for
 * Java v2, hosts found again by their fleet tag. docs/autoscaler-aws.md says how to configure it.
 */
package dev.gpucloud.autoscaler.provider.aws;
