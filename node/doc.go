// Package node wires a jobmesh node together from its parts: repo, host,
// block layer, replicated store and HTTP API. On a processor it also runs
// the worker, advertises the processor (/nodes/<peer>: grade, wallet and
// the models on its disk) and keeps its model store, into which the worker's
// model fetcher pre-downloads the models the mesh names it for.
package node
