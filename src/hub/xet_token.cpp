// SPDX-License-Identifier: MIT
// Placeholder: the Xet read token (issue 18).
#include "hfget/repo.hpp"
