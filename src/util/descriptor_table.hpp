// SPDX-License-Identifier: MIT
#pragma once

namespace hfget::util {

/// Grows this process's file descriptor table to room for ~1024 descriptors (or the soft RLIMIT_NOFILE, if
/// lower), while only one thread runs. Call it before any thread starts, and again in a child after fork()
/// (the child's table is cut to its highest open descriptor).
///
/// Why: Linux grows a process's descriptor table when a new descriptor does not fit (64, then 128, 256, ...),
/// and when the table is shared by several threads it waits for an RCU grace period before it swaps the
/// table in (fs/file.c, expand_fdtable: synchronize_rcu()), while every other thread that opens a socket or a
/// file waits for the swap. A download opens 16-64 connections at once, each a socket or two and a curl
/// wake-up socketpair, plus each open file's partial file, journal and lock: it crossed 64 and 128 within its
/// first milliseconds, and each crossing stopped every connection for a grace period. Grown here, with one
/// thread, the kernel needs no grace period, and the table never shrinks. The cost is 8 KiB of kernel memory.
void reserve_descriptor_table() noexcept;

}  // namespace hfget::util
