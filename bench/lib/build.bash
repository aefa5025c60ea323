# build.bash, sourced by bench scripts: build_ibanalyze DIR [FLAG...] builds ibanalyze into DIR
# (go build FLAGs before the package) as `make build` does: linked static, without cgo (the
# Makefile's build target says why), so that the bench measures the binary users get.
build_ibanalyze() {
  local dir=$1
  shift
  CGO_ENABLED=0 "${GO:-go}" build "$@" -o "$dir" ./cmd/ibanalyze
}
