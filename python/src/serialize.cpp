// Serialization methods of oboro.Context and oboro.Ciphertext (filled in by the serialization work).
#include "state.hpp"

namespace oboro::py {

void add_serialization_methods(nb::class_<PyContext>&, nb::class_<PyCiphertext>&) {}

}  // namespace oboro::py
