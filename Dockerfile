# Hostmint: CoreDNS with the hostname plugin, as a static binary in a non-root image.
#
#   podman build -t hostmint .            (or docker build)
#   podman volume create hostmint-data
#   podman run -d --name hostmint --cap-drop=all --cap-add=NET_BIND_SERVICE \
#     --read-only --network host -v hostmint-data:/data hostmint
#     (or -p 53:53/udp -p 53:53/tcp -p 8080:8080 instead of --network host)
#   podman exec hostmint /hostmint accounts list
#
# docs/operations.md, "Production deployment", has the rest (PostgreSQL beside
# it, your own Corefile); e2e/image_test.go builds and runs this file as is.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/coredns ./coredns-build \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/hostmint ./cmd/hostmint \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coredns /coredns
# The admin CLI: podman exec <container> /hostmint accounts list (it asks the
# API on 127.0.0.1:8080 with the token the server wrote to /data), or
# migrate and backup.
COPY --from=build /out/hostmint /hostmint
# /data is the volume: the SQLite store, the admin token and the
# cert_encryption_key_file key (both generated at first start). A new named
# volume takes this directory's owner (65532), so the server can write there.
COPY --from=build --chown=65532:65532 /out/data /data
COPY deploy/Corefile.container /etc/hostmint/Corefile
ENV HOSTMINT_TOKEN_FILE=/data/admin.token
WORKDIR /data
VOLUME /data
USER 65532:65532
# DNS (UDP and TCP), the HTTP API and the metrics. Port 53 takes
# NET_BIND_SERVICE, the only capability the server needs:
# --cap-drop=all --cap-add=NET_BIND_SERVICE (Docker also lets a non-root
# process bind it without, as it sets ip_unprivileged_port_start to 0).
EXPOSE 53/udp 53/tcp 8080/tcp 9153/tcp
ENTRYPOINT ["/coredns"]
CMD ["-conf", "/etc/hostmint/Corefile"]
