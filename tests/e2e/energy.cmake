# GPU energy end to end (energy_test.cpp): the input_stall sample under `gpuwise run --simulate`,
# whose simulated NVML logs every energy-counter read it answers (GWSIM_NVML_ENERGY_LOG).
if(TARGET input_stall)
  gpuwise_add_test(e2e_energy_test SOURCES energy_test.cpp
    LIBS nlohmann_json::nlohmann_json LABELS e2e TIMEOUT 300)
  add_dependencies(e2e_energy_test gpuwise_exe gpuwise simdevice input_stall)
endif()
