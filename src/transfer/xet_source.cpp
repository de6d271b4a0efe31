// SPDX-License-Identifier: MIT
// Placeholder: the Xet byte source (issue 18).
#include "transfer/byte_source.hpp"
