//===- GnnDialect.cpp - The gnn dialect, its types and attributes ---------===//
#include "gnnc/Dialect/Gnn/GnnDialect.h"
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Plan/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

#include "gnnc/Dialect/Gnn/GnnDialect.cpp.inc"
#include "gnnc/Dialect/Gnn/GnnEnums.cpp.inc"
#include "gnnc/Dialect/Gnn/GnnInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnAttrs.cpp.inc"

void GnnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gnnc/Dialect/Gnn/GnnOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnnc/Dialect/Gnn/GnnTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnnc/Dialect/Gnn/GnnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// GnnGraphType
//===----------------------------------------------------------------------===//

LogicalResult GnnGraphType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   GraphFormat format, IntegerType offsetType,
                                   IntegerType indexType) {
  auto isIndexWidth = [](IntegerType t) {
    return t.isSignless() && (t.getWidth() == 32 || t.getWidth() == 64);
  };
  if (!isIndexWidth(offsetType))
    return emitError() << "graph row offsets must be i32 or i64, got "
                       << offsetType;
  if (!isIndexWidth(indexType))
    return emitError() << "graph column indices must be i32 or i64, got "
                       << indexType;
  if (indexType.getWidth() > offsetType.getWidth())
    return emitError() << "graph column indices (" << indexType
                       << ") are wider than its row offsets (" << offsetType
                       << "): a graph has at least as many non-zeros as "
                          "columns it can address";
  return success();
}

//===----------------------------------------------------------------------===//
// RowsAttr
//===----------------------------------------------------------------------===//

LogicalResult RowsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t stride) {
  if (stride < 1)
    return emitError() << "#gnn.rows stride must be positive, got " << stride;
  if (stride > limits::kMaxRowStride)
    return emitError() << "#gnn.rows stride " << stride
                       << " is over the limit of the kernel plans, "
                       << limits::kMaxRowStride << " elements";
  return success();
}

LogicalResult
RowsAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                         function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#gnn.rows lays out the rows of a 2-D feature "
                          "tensor, not a tensor of rank "
                       << shape.size();
  if (ShapedType::isDynamic(shape[1]))
    return emitError() << "#gnn.rows<stride = " << getStride()
                       << "> needs a static feature width";
  if (getStride() < shape[1])
    return emitError() << "#gnn.rows stride " << getStride()
                       << " is smaller than the feature width " << shape[1]
                       << "; a row stride holds at least one row";
  (void)elementType;
  return success();
}

int64_t gnnc::gnn::rowStride(RankedTensorType type) {
  if (auto rows = dyn_cast_or_null<RowsAttr>(type.getEncoding()))
    return rows.getStride();
  return type.getDimSize(1);
}

bool gnnc::gnn::hasRowsLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa_and_nonnull<RowsAttr>(tensor.getEncoding());
}

//===----------------------------------------------------------------------===//
// ScheduleAttr
//===----------------------------------------------------------------------===//

llvm::hash_code gnnc::hash_value(const Schedule &schedule) {
  return llvm::hash_value(schedule.str());
}

Attribute ScheduleAttr::parse(AsmParser &parser, Type) {
  // `<` (key `=` value (`,` key `=` value)*)? `>`, each key a field of
  // gnnc::Schedule, each value an integer or a keyword; the field table
  // (setScheduleField) says what each field takes.
  Schedule schedule;
  llvm::SmallVector<bool> seen(kNumScheduleFields, false);
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  if (succeeded(parser.parseOptionalGreater()))
    return ScheduleAttr::get(parser.getContext(), schedule);
  do {
    SMLoc keyLoc = parser.getCurrentLocation();
    std::string key;
    if (parser.parseKeywordOrString(&key) || parser.parseEqual())
      return {};
    std::optional<ScheduleField> field = parseScheduleFieldName(key);
    if (!field) {
      parser.emitError(keyLoc) << "#gnn.schedule has no field '" << key << "'";
      return {};
    }
    if (seen[static_cast<size_t>(*field)]) {
      parser.emitError(keyLoc)
          << "#gnn.schedule field '" << key << "' is given twice";
      return {};
    }
    seen[static_cast<size_t>(*field)] = true;
    SMLoc valueLoc = parser.getCurrentLocation();
    // A keyword (true, false, an enum case) or an integer; MLIR's integer
    // parser would read `true` as 1-bit -1.
    StringRef keyword;
    std::string value;
    int64_t number = 0;
    if (succeeded(parser.parseOptionalKeyword(&keyword))) {
      value = keyword.str();
    } else {
      if (parser.parseInteger(number))
        return {};
      value = std::to_string(number);
    }
    Status set = setScheduleField(schedule, *field, value);
    if (!set) {
      parser.emitError(valueLoc) << set.message();
      return {};
    }
  } while (succeeded(parser.parseOptionalComma()));
  if (parser.parseGreater())
    return {};
  return ScheduleAttr::getChecked([&] { return parser.emitError(start); },
                                  parser.getContext(), schedule);
}

void ScheduleAttr::print(AsmPrinter &printer) const {
  printer << "<" << scheduleBody(getValue()) << ">";
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Schedule schedule) {
  Status fields = checkScheduleFields(schedule);
  if (!fields)
    return emitError() << fields.message();
  return success();
}

//===----------------------------------------------------------------------===//
// Parameter roles (#gnn.param, #gnn.launch, #gnn.workspace)
//===----------------------------------------------------------------------===//

AsmPrinter &gnnc::operator<<(AsmPrinter &printer, ParamRole role) {
  printer << paramRoleName(role);
  return printer;
}

FailureOr<ParamRole> mlir::FieldParser<ParamRole>::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return failure();
  if (std::optional<ParamRole> role = parseParamRole(name))
    return *role;
  return parser.emitError(loc)
         << "unknown kernel parameter role '" << name << "'";
}

void gnnc::gnn::printRoleList(AsmPrinter &printer, ArrayRef<ParamRole> roles) {
  printer << "[";
  llvm::interleaveComma(roles, printer,
                        [&](ParamRole role) { printer << role; });
  printer << "]";
}

FailureOr<SmallVector<ParamRole>> gnnc::gnn::parseRoleList(AsmParser &parser) {
  SmallVector<ParamRole> roles;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<ParamRole> role = FieldParser<ParamRole>::parse(parser);
        if (failed(role))
          return failure();
        roles.push_back(*role);
        return success();
      }))
    return failure();
  return roles;
}
