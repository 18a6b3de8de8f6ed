# Every sample's planted inefficiency gets its recommendation end to end (gpuwise run --simulate).
if(TARGET samples)
  gpuwise_add_test(e2e_recommendations_test SOURCES recommendations_test.cpp
    LIBS nlohmann_json::nlohmann_json LABELS e2e TIMEOUT 900)
  add_dependencies(e2e_recommendations_test gpuwise_exe gpuwise simdevice samples)
endif()
