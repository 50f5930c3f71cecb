package early

const sysBPF = 280 // SYS_bpf (TestKernelNumbers)
