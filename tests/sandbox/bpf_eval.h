// A classic-BPF interpreter for seccomp programs, so tests can check what a filter decides for
// a given system call without loading it into the kernel.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kd::test {

inline uint32_t bpf_eval(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  auto load = [&](uint32_t off) {
    if (off + 4 > sizeof data) throw std::runtime_error("bpf: load out of seccomp_data");
    uint32_t v;
    std::memcpy(&v, reinterpret_cast<const char*>(&data) + off, 4);
    return v;
  };
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter& i = prog[pc];
    const uint32_t src = (BPF_SRC(i.code) == BPF_X) ? x : i.k;
    switch (BPF_CLASS(i.code)) {
      case BPF_LD:
        if (BPF_MODE(i.code) == BPF_ABS)
          a = load(i.k);
        else if (BPF_MODE(i.code) == BPF_IMM)
          a = i.k;
        else if (BPF_MODE(i.code) == BPF_MEM)
          a = mem[i.k];
        else if (BPF_MODE(i.code) == BPF_LEN)
          a = sizeof data;
        else
          throw std::runtime_error("bpf: unsupported load");
        break;
      case BPF_LDX:
        if (BPF_MODE(i.code) == BPF_IMM)
          x = i.k;
        else if (BPF_MODE(i.code) == BPF_MEM)
          x = mem[i.k];
        else if (BPF_MODE(i.code) == BPF_LEN)
          x = sizeof data;
        else
          throw std::runtime_error("bpf: unsupported ldx");
        break;
      case BPF_ST:
        mem[i.k] = a;
        break;
      case BPF_STX:
        mem[i.k] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(i.code)) {
          case BPF_ADD:
            a += src;
            break;
          case BPF_SUB:
            a -= src;
            break;
          case BPF_MUL:
            a *= src;
            break;
          case BPF_DIV:
            a = src ? a / src : 0;
            break;
          case BPF_AND:
            a &= src;
            break;
          case BPF_OR:
            a |= src;
            break;
          case BPF_XOR:
            a ^= src;
            break;
          case BPF_LSH:
            a <<= src;
            break;
          case BPF_RSH:
            a >>= src;
            break;
          case BPF_NEG:
            a = -a;
            break;
          default:
            throw std::runtime_error("bpf: unsupported alu");
        }
        break;
      case BPF_JMP: {
        if (BPF_OP(i.code) == BPF_JA) {
          pc += i.k;
          break;
        }
        bool taken;
        switch (BPF_OP(i.code)) {
          case BPF_JEQ:
            taken = a == src;
            break;
          case BPF_JGT:
            taken = a > src;
            break;
          case BPF_JGE:
            taken = a >= src;
            break;
          case BPF_JSET:
            taken = (a & src) != 0;
            break;
          default:
            throw std::runtime_error("bpf: unsupported jump");
        }
        pc += taken ? i.jt : i.jf;
        break;
      }
      case BPF_RET:
        return BPF_RVAL(i.code) == BPF_A ? a : i.k;
      case BPF_MISC:
        if (BPF_MISCOP(i.code) == BPF_TAX)
          x = a;
        else
          a = x;
        break;
    }
  }
  throw std::runtime_error("bpf: fell off the end of the program");
}

inline seccomp_data syscall_data(int nr, std::initializer_list<uint64_t> args = {},
                                 uint32_t arch = AUDIT_ARCH_X86_64) {
  seccomp_data d{};
  d.nr = nr;
  d.arch = arch;
  size_t i = 0;
  for (uint64_t v : args)
    d.args[i++] = v;
  return d;
}

}  // namespace kd::test
