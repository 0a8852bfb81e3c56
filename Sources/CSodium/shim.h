#ifndef ONBOARD_CSODIUM_SHIM_H
#define ONBOARD_CSODIUM_SHIM_H
#include <sodium.h>
#endif
