package io.ringshift.cli.internal;

import picocli.CommandLine.Command;

/** {@code ringshift ring ...}: build, show, look up and diff ring snapshots offline. */
@Command(
    name = "ring",
    mixinStandardHelpOptions = true,
    description = "Build, inspect, query and diff ring snapshots.",
    subcommands = {RingBuildCommand.class, RingShowCommand.class, RingLookupCommand.class, RingDiffCommand.class})
public final class RingCommand {}
