// Package node wires a jobmesh node together from its parts: repo, host,
// block layer, replicated store and HTTP API.
package node
