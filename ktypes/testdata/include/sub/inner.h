#pragma once
struct inner { short a; long b; };
