/**
 * The concrete steps (swap, runtime, kubeadm init and join, GPU, drain, backup, repair …) and the phase lists they
 * make, each written in the vocabulary of dev.gpuctl.step.
 */
package dev.gpuctl.steps;
