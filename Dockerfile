# Hostmint: CoreDNS with the hostname plugin, as a static binary in a non-root image.
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
# The admin CLI (migrate, backup): docker exec <container> /hostmint backup ...
COPY --from=build /out/hostmint /hostmint
COPY --from=build --chown=65532:65532 /out/data /data
COPY deploy/Corefile.container /etc/hostmint/Corefile
WORKDIR /data
USER 65532:65532
# DNS (UDP and TCP), the HTTP API and the metrics. Docker lets a non-root
# process bind port 53 inside the container (ip_unprivileged_port_start is 0 there).
EXPOSE 53/udp 53/tcp 8080/tcp 9153/tcp
ENTRYPOINT ["/coredns"]
CMD ["-conf", "/etc/hostmint/Corefile"]
