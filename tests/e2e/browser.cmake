# The HTML report in a real headless Chromium; included from tests/e2e/CMakeLists.txt.
# Optional lane: `scripts/install-deps chromium`; the test reports "Skipped" where no Chromium runs.
if(TARGET pageable_copies)
  find_package(ZLIB REQUIRED)
  add_executable(browser_report_tool browser_report_tool.cpp)
  target_compile_options(browser_report_tool PRIVATE ${GPUWISE_WARNINGS})
  target_link_libraries(browser_report_tool PRIVATE gpuwise_import gpuwise_report)
  set_target_properties(browser_report_tool PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

  gpuwise_add_test(browser_test SOURCES browser_test.cpp browser_cdp.cpp browser_png.cpp
    LIBS gpuwise_report nlohmann_json::nlohmann_json ZLIB::ZLIB LABELS e2e browser)
  set_tests_properties(browser_test PROPERTIES SKIP_RETURN_CODE 77)
  add_dependencies(browser_test gpuwise_exe gpuwise simdevice pageable_copies browser_report_tool)
endif()
