# syntax=docker/dockerfile:1
# Build the manager binary.
# Override BASE_IMAGE to build from another registry, e.g.
#   make docker-build IMG=<img> BASE_IMAGE=docker.io/library/golang:1.26.11
ARG BASE_IMAGE=golang:1.26.11
FROM ${BASE_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
# The version linked into internal/version, as `make build` links it: the
# build context holds no .git, so `make docker-build` passes them (the VERSION
# file, git rev-parse HEAD, git describe --tags --always --dirty). Without
# them the binary reports version 0.0.0-dev and revision unknown.
ARG VERSION=""
ARG REVISION=""
ARG GIT_DESCRIBE=""

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
# binary with its version. GOARCH is left empty unless buildx sets
# TARGETARCH, so that a plain `docker build` targets the platform of the
# build host.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -o manager \
    -ldflags "-s -w -X sunstrider.cn/operator/internal/version.Version=${VERSION} \
    -X sunstrider.cn/operator/internal/version.Revision=${REVISION} \
    -X sunstrider.cn/operator/internal/version.gitDescribe=${GIT_DESCRIBE}" \
    ./cmd

# distroless/static: no shell, no package manager, CA certificates and
# tzdata only; "nonroot" runs as uid/gid 65532.
# https://github.com/GoogleContainerTools/distroless
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /manager
USER 65532:65532

ENTRYPOINT ["/manager"]
