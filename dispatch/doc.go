// Package dispatch decides who gets which work and in what order: hardware
// grading, model locality, stake and QoS weights, the task-value queue, QoS
// scores and the fee split.
package dispatch
