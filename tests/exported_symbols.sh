#!/usr/bin/env bash
# liblntune.so exports exactly its public API: the C ABI (lntune.h) and the
# C++ API (lntune.hpp, types.hpp) -- nothing internal (lntune::rt::, gen::,
# cache::, tune::), no std:: template instantiations. ctest label cpu.
#   bash tests/exported_symbols.sh path/to/liblntune.so SONAME
# Fails on a symbol that is not on the list below (unexpected export) and on
# one of the list that is missing (a public function lost). Adding to the
# public API means adding LNTUNE_API to its declaration and its name here.
# The names are demangled as GCC's libstdc++ ABI spells them (nm -C).
set -euo pipefail
lib=${1:?usage: exported_symbols.sh LIBRARY SONAME}
want_soname=${2:?usage: exported_symbols.sh LIBRARY SONAME}

expected=$(LC_ALL=C sort <<'LIST'
lntune_backward
lntune_backward_workspace_size
lntune_forward
lntune_last_error
lntune_norm_backward
lntune_norm_backward_workspace_size
lntune_norm_forward
lntune_set_tuned
lntune_version
lntune::forward(lntune::ForwardArgs const&)
lntune::backward(lntune::BackwardArgs const&)
lntune::backward_workspace_size(lntune::BackwardArgs const&)
lntune::explain_forward(lntune::ForwardArgs const&)
lntune::explain_backward(lntune::BackwardArgs const&)
lntune::version()
lntune::dtype_size(lntune::DType)
lntune::to_string(lntune::DType)
lntune::to_string(lntune::Kernel)
lntune::to_string(lntune::Norm)
lntune::to_string[abi:cxx11](lntune::Config const&)
lntune::parse_dtype(std::basic_string_view<char, std::char_traits<char> >)
lntune::parse_kernel(std::basic_string_view<char, std::char_traits<char> >)
lntune::parse_norm(std::basic_string_view<char, std::char_traits<char> >)
lntune::Traits::canonical() const
lntune::operator==(lntune::Traits const&, lntune::Traits const&)
lntune::operator==(lntune::InstanceKey const&, lntune::InstanceKey const&)
lntune::operator<<(std::ostream&, lntune::Traits const&)
lntune::operator<<(std::ostream&, lntune::Config const&)
lntune::operator<<(std::ostream&, lntune::InstanceKey const&)
lntune::operator<<(std::ostream&, lntune::DType)
lntune::operator<<(std::ostream&, lntune::Kernel)
lntune::InstanceKey::name[abi:cxx11]() const
std::hash<lntune::InstanceKey>::operator()(lntune::InstanceKey const&) const
typeinfo for lntune::Error
typeinfo name for lntune::Error
vtable for lntune::Error
LIST
)

fail=0
# "ADDRESS TYPE NAME": the demangled name may hold spaces.
actual=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3- | LC_ALL=C sort -u)
unexpected=$(LC_ALL=C comm -13 <(echo "$expected") <(echo "$actual"))
missing=$(LC_ALL=C comm -23 <(echo "$expected") <(echo "$actual"))
if [ -n "$unexpected" ]; then
  echo "FAIL: $lib exports symbols that are not public API (hide them, or add them to the list):"
  echo "$unexpected" | sed 's/^/  /'
  fail=1
fi
if [ -n "$missing" ]; then
  echo "FAIL: $lib does not export these public symbols:"
  echo "$missing" | sed 's/^/  /'
  fail=1
fi

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ "$soname" != "$want_soname" ]; then
  echo "FAIL: SONAME of $lib is '$soname', expected '$want_soname'"
  fail=1
fi

if [ "$fail" = 0 ]; then
  echo "ok: $lib ($soname) exports exactly the $(echo "$actual" | wc -l) public symbols"
fi
exit "$fail"
