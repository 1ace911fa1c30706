#include "lntune/types.hpp"

#include <sstream>

namespace lntune {

std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
  }
  return 0;
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::string_view to_string(Kernel k) {
  switch (k) {
    case Kernel::fwd: return "fwd";
    case Kernel::bwd_dx: return "bwd_dx";
    case Kernel::bwd_dwdb: return "bwd_dwdb";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType d) { return os << to_string(d); }
std::ostream& operator<<(std::ostream& os, Kernel k) { return os << to_string(k); }

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "f32" || s == "float32" || s == "float") return DType::f32;
  if (s == "fp16" || s == "f16" || s == "float16" || s == "half") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::optional<Kernel> parse_kernel(std::string_view s) {
  if (s == "fwd") return Kernel::fwd;
  if (s == "bwd_dx") return Kernel::bwd_dx;
  if (s == "bwd_dwdb") return Kernel::bwd_dwdb;
  return std::nullopt;
}

std::string_view to_string(Norm n) {
  switch (n) {
    case Norm::layer: return "layernorm";
    case Norm::rms: return "rmsnorm";
  }
  return "?";
}

std::optional<Norm> parse_norm(std::string_view s) {
  if (s == "layernorm" || s == "layer_norm" || s == "ln" || s == "layer") return Norm::layer;
  if (s == "rmsnorm" || s == "rms_norm" || s == "rms") return Norm::rms;
  return std::nullopt;
}

Traits Traits::canonical() const {
  Traits t = *this;
  if (!t.has_weight && !t.has_bias) t.w_dtype = t.x_dtype;
  if (!t.has_weight) t.zero_centered = false;  // nothing to offset
  if (t.y_dtype == t.x_dtype) t.y_dtype.reset();
  if (t.kernel == Kernel::bwd_dwdb) {
    // Reads fp32 partials, writes w_dtype: the same kernel for every variant.
    t.x_dtype = t.w_dtype;
    t.norm = Norm::layer;
    t.residual.reset();
    t.zero_centered = false;
    t.y_dtype.reset();
  }
  return t;
}

bool operator==(const Traits& a, const Traits& b) {
  return a.kernel == b.kernel && a.x_dtype == b.x_dtype && a.w_dtype == b.w_dtype &&
         a.has_weight == b.has_weight && a.has_bias == b.has_bias && a.norm == b.norm &&
         a.residual == b.residual && a.zero_centered == b.zero_centered && a.y_dtype == b.y_dtype;
}

std::ostream& operator<<(std::ostream& os, const Traits& t) {
  os << to_string(t.kernel) << ' ' << to_string(t.x_dtype);
  if (t.has_weight || t.has_bias) os << " w=" << to_string(t.w_dtype);
  os << (t.has_weight ? " weight" : " no-weight") << (t.has_bias ? " bias" : " no-bias");
  if (t.norm != Norm::layer) os << ' ' << to_string(t.norm);
  if (t.residual) os << " residual=" << to_string(*t.residual);
  if (t.zero_centered) os << " zero-centered";
  if (t.y_dtype && *t.y_dtype != t.x_dtype) os << " y=" << to_string(*t.y_dtype);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Config& c) {
  os << "block_size=" << c.block_size << " num_warps=" << c.num_warps << " rows_per_cta=" << c.rows_per_cta
     << " group_size_m=" << c.group_size_m;
  if (c.cluster_size != 1) os << " cluster_size=" << c.cluster_size;
  return os;
}

std::string to_string(const Config& c) {
  std::ostringstream os;
  os << c;
  return os.str();
}

bool operator==(const InstanceKey& a, const InstanceKey& b) {
  return a.traits == b.traits && a.block_size == b.block_size && a.num_warps == b.num_warps &&
         a.rows_per_cta == b.rows_per_cta && a.vec == b.vec && a.single_tile == b.single_tile &&
         a.cluster_size == b.cluster_size;
}

std::string InstanceKey::name() const {
  std::ostringstream os;
  os << to_string(traits.kernel) << '_' << to_string(traits.x_dtype);
  if (traits.has_weight || traits.has_bias) os << "_w" << to_string(traits.w_dtype);
  os << '_' << (traits.has_weight ? "w" : "") << (traits.has_bias ? "b" : "")
     << (traits.has_weight || traits.has_bias ? "" : "noaffine") << "_b" << block_size << "_w"
     << num_warps << "_r" << rows_per_cta << "_v" << vec << (single_tile ? "_s" : "_t");
  if (cluster_size != 1) os << "_c" << cluster_size;
  if (traits.norm == Norm::rms) os << "_rms";
  if (traits.residual) os << "_r" << to_string(*traits.residual);
  if (traits.zero_centered) os << "_zc";
  if (traits.y_dtype && *traits.y_dtype != traits.x_dtype) os << "_o" << to_string(*traits.y_dtype);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const InstanceKey& k) { return os << k.name(); }

}  // namespace lntune

namespace {

// Boost's hash_combine step.
void mix(std::size_t& h, std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

}  // namespace

std::size_t std::hash<lntune::Config>::operator()(const lntune::Config& c) const noexcept {
  std::size_t h = 0;
  for (int v : {c.block_size, c.num_warps, c.rows_per_cta, c.group_size_m, c.cluster_size})
    mix(h, static_cast<std::size_t>(static_cast<unsigned>(v)));
  return h;
}

std::size_t std::hash<lntune::InstanceKey>::operator()(const lntune::InstanceKey& k) const noexcept {
  std::size_t h = 0;
  mix(h, static_cast<std::size_t>(k.traits.kernel));
  mix(h, static_cast<std::size_t>(k.traits.x_dtype));
  mix(h, static_cast<std::size_t>(k.traits.w_dtype));
  mix(h, static_cast<std::size_t>(k.traits.has_weight) * 2 + static_cast<std::size_t>(k.traits.has_bias));
  mix(h, static_cast<std::size_t>(k.block_size));
  mix(h, static_cast<std::size_t>(k.num_warps));
  mix(h, static_cast<std::size_t>(k.rows_per_cta));
  mix(h, static_cast<std::size_t>(k.vec) * 2 + static_cast<std::size_t>(k.single_tile));
  mix(h, static_cast<std::size_t>(k.cluster_size));
  mix(h, static_cast<std::size_t>(k.traits.norm) * 2 + static_cast<std::size_t>(k.traits.zero_centered));
  mix(h, k.traits.residual ? 1 + static_cast<std::size_t>(*k.traits.residual) : 0);
  mix(h, k.traits.y_dtype ? 1 + static_cast<std::size_t>(*k.traits.y_dtype) : 0);
  return h;
}
