module github.com/jobmesh/jobmesh

go 1.26.0
