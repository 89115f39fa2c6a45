# syntax=docker/dockerfile:1
# Build the manager binary.
# Override BASE_IMAGE to build from another registry, e.g.
#   make docker-build IMG=<img> BASE_IMAGE=docker.io/library/golang:1.26.11
ARG BASE_IMAGE=golang:1.26.11
FROM ${BASE_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Download the modules first, in their own layer: source changes do not
# invalidate it.
COPY go.mod go.sum ./
RUN go mod download

# The Go sources only (.dockerignore keeps everything else out).
COPY cmd/ cmd/
COPY api/ api/
COPY internal/ internal/

# A static (CGO_ENABLED=0), reproducible (-trimpath), stripped (-s -w)
# binary. GOARCH is left empty unless buildx sets TARGETARCH, so that a plain
# `docker build` targets the platform of the build host.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w" -o manager ./cmd

# distroless/static: no shell, no package manager, CA certificates and
# tzdata only; "nonroot" runs as uid/gid 65532.
# https://github.com/GoogleContainerTools/distroless
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /manager
USER 65532:65532

ENTRYPOINT ["/manager"]
