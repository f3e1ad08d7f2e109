#!/bin/sh
# Builds blob and blobd (release) and installs them under PREFIX (default: ~/.local):
#   PREFIX/bin/blob, PREFIX/bin/blobd
#   PREFIX/share/man/man1/blob.1, PREFIX/share/man/man8/blobd.8
#   PREFIX/share/bash-completion/completions/blob, PREFIX/share/zsh/site-functions/_blob,
#   PREFIX/share/fish/vendor_completions.d/blob.fish
#   systemd user units blobd.socket and blobd.service (ExecStart pointing at PREFIX/bin/blobd) in
#   PREFIX/share/systemd/user when PREFIX is ~/.local (where the user manager looks), else in
#   PREFIX/lib/systemd/user (as for /usr/local).
# Usage: Examples/install/install.sh [PREFIX]
# Then, for socket activation: systemctl --user daemon-reload && systemctl --user enable --now blobd.socket
# With BLOBSTORE_SKIP_BUILD=1 the binaries already built in .build/release are installed as they are.
set -eu
prefix=${1:-$HOME/.local}
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
cd "$(dirname "$0")/../.."

if [ "${BLOBSTORE_SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release --product blob
    swift build -c release --product blobd
fi
bin=$(swift build -c release --show-bin-path)
[ -x "$bin/blob" ] && [ -x "$bin/blobd" ] || { echo "install.sh: $bin/blob or $bin/blobd is missing" >&2; exit 1; }

if [ "$prefix" = "$HOME/.local" ]; then units=$prefix/share/systemd/user; else units=$prefix/lib/systemd/user; fi
share=$prefix/share
mkdir -p "$prefix/bin" "$share/man/man1" "$share/man/man8" "$share/bash-completion/completions" \
    "$share/zsh/site-functions" "$share/fish/vendor_completions.d" "$units"

install -m 0755 "$bin/blob" "$bin/blobd" "$prefix/bin/"
"$prefix/bin/blob" help --man >"$share/man/man1/blob.1"
"$prefix/bin/blobd" --help | "$prefix/bin/blob" help --man blobd >"$share/man/man8/blobd.8"
"$prefix/bin/blob" completion bash >"$share/bash-completion/completions/blob"
"$prefix/bin/blob" completion zsh >"$share/zsh/site-functions/_blob"
"$prefix/bin/blob" completion fish >"$share/fish/vendor_completions.d/blob.fish"
install -m 0644 Examples/systemd/blobd.socket "$units/blobd.socket"
# The unit names the installed binary (systemd wants an absolute path; '%' must be doubled).
escaped=$(printf '%s' "$prefix/bin/blobd" | sed 's/%/%%/g; s/[&|\\]/\\&/g')
sed "s|^ExecStart=.*|ExecStart=$escaped|" Examples/systemd/blobd.service >"$units/blobd.service"
chmod 0644 "$units/blobd.service"

echo "installed blob and blobd $("$prefix/bin/blobd" --version | cut -d' ' -f2) under $prefix"
echo "systemd user units in $units; start on first use with:"
echo "  systemctl --user daemon-reload && systemctl --user enable --now blobd.socket"
echo "zsh finds the completion if $share/zsh/site-functions is on its fpath (fpath+=($share/zsh/site-functions))"
