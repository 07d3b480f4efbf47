# syntax=docker/dockerfile:1
# quire in a container: built in one stage, run in a slim one (see README.md, Container image).
#   docker build --build-arg QUIRE_GIT_COMMIT=$(git rev-parse --short=12 HEAD) -t quire .
#   docker run -p 8080:8080 -v quire-data:/data quire

FROM rust:1-slim-bookworm AS build
# C compilers for the bundled SQLite, mimalloc and aws-lc (TLS to S3 and PostgreSQL clients).
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# .git is not sent to the builder (.dockerignore): build.rs takes the commit from here.
ARG QUIRE_GIT_COMMIT=unknown
ENV QUIRE_GIT_COMMIT=${QUIRE_GIT_COMMIT}
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p quire \
 && cp target/release/quire /usr/local/bin/quire

FROM debian:bookworm-slim
# CA certificates for TLS to an object store; nothing else beyond the C library.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin quire \
 && mkdir /data \
 && chown quire:quire /data
COPY --from=build /usr/local/bin/quire /usr/local/bin/quire
ENV QUIRE_DATA_DIR=/data \
    QUIRE_LISTEN=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
USER quire
# SIGTERM (docker stop's signal) lets in-flight requests finish within QUIRE_SHUTDOWN_GRACE (8 s);
# docker stop waits 10 s by default.
ENTRYPOINT ["quire"]
CMD ["serve"]
