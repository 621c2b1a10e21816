# jobnode in a container: a processor, client or bootstrap node.
#   docker build -t jobmesh/jobnode .
#   docker volume create jobmesh
#   docker run --rm -v jobmesh:/var/lib/jobmesh jobmesh/jobnode init --listen /ip4/0.0.0.0/tcp/4001 --listen /ip4/0.0.0.0/udp/4001/quic-v1
#   docker run -d --name jobnode -v jobmesh:/var/lib/jobmesh -p 4001:4001/tcp -p 4001:4001/udp \
#       jobmesh/jobnode process --bootstrap /ip4/.../p2p/12D3KooW...
# docs/OPERATING.md has the ports, the config and the backups.

# The build stage compiles with scripts/build.sh, the script CI runs too, so
# the binary here is the one CI builds and tests.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN scripts/build.sh /out/jobnode && mkdir -p /out/repo

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/jobnode /usr/local/bin/jobnode
COPY --from=build --chown=65532:65532 /out/repo /var/lib/jobmesh
# The repo: identity, config.toml, wallet, datastore and block store.
ENV JOBMESH_REPO=/var/lib/jobmesh
VOLUME /var/lib/jobmesh
# 4001/tcp: libp2p over TCP; 4001/udp: libp2p over QUIC (the [p2p] listen
# defaults). The HTTP API listens on loopback inside the container unless
# [api] address says otherwise; see docs/OPERATING.md before publishing it.
EXPOSE 4001/tcp 4001/udp
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/jobnode"]
CMD ["process"]
