package dev.gpuctl.inventory;

/** A jump host: nodes are reached through it with direct-tcpip channels. */
public record Bastion(String address, String user, int port) {}
